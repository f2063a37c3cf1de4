/** A random id of 32 hex digits. getRandomValues works on plain-http pages too, unlike randomUUID. */
export function randomId(): string {
  return Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => (b | 256).toString(16).slice(1)).join('');
}
