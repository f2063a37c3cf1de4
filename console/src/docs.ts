/**
 * The API reference page (/docs): Scalar's standalone build, served by the service itself, over
 * the OpenAPI document at /docs/json. Everything that would reach another host is off: Scalar's
 * web fonts, telemetry, its AI agent and MCP links, and the developer tools.
 */
declare const Scalar: { createApiReference(target: string, configuration: Record<string, unknown>): unknown };

Scalar.createApiReference('#app', {
  url: '/docs/json',
  withDefaultFonts: false,
  telemetry: false,
  agent: { disabled: true },
  mcp: { disabled: true },
  showDeveloperTools: 'never',
  hideClientButton: false,
  persistAuth: false,
  defaultOpenAllTags: false,
  metaData: { title: 'Event analytics · API reference' },
});
