import { isbot } from 'isbot';
import UAParser from 'ua-parser-js';

export type DeviceType = 'desktop' | 'mobile' | 'tablet';

/** What a user agent string tells of the browser that sent it. */
export interface UserAgentFacts {
  browser?: { name: string; version?: string };
  os?: { name: string; version?: string };
  /** Absent when the string names no browser nor system (a library, a TV, a console). */
  deviceType?: DeviceType;
  /** A crawler, a monitor, a headless browser or an HTTP library, by isbot's list. */
  bot: boolean;
  /** Whether it claims to be a browser (`Mozilla/…`): a bot among these is a robot visiting pages, not a server-side SDK. */
  browserLike: boolean;
}

/** User agents remembered: visitors share a few hundred strings, and parsing one costs tens of microseconds. */
const CACHE_SIZE = 2000;
const cache = new Map<string, UserAgentFacts>();

const named = (part: { name?: string; version?: string }) =>
  part.name === undefined ? undefined : part.version === undefined ? { name: part.name } : { name: part.name, version: part.version };

function parse(userAgent: string): UserAgentFacts {
  const { browser, os, device } = new UAParser(userAgent).getResult();
  const facts: UserAgentFacts = { bot: isbot(userAgent), browserLike: userAgent.startsWith('Mozilla/') };
  const b = named(browser);
  const o = named(os);
  if (b) facts.browser = b;
  if (o) facts.os = o;
  // ua-parser-js names no type for desktops: a known browser or system without one is a desktop.
  if (device.type === 'mobile' || device.type === 'tablet') facts.deviceType = device.type;
  else if (device.type === undefined && (b || o)) facts.deviceType = 'desktop';
  return facts;
}

/**
 * The facts of `userAgent`, from a bounded cache: the first remembered goes first. A hit is one
 * look-up (moving it to the back, as an LRU cache does, cost a delete and an insert per event);
 * the few strings most visitors share come back at once when pushed out.
 */
export function userAgentFacts(userAgent: string): UserAgentFacts {
  const known = cache.get(userAgent);
  if (known) return known;
  const facts = parse(userAgent);
  if (cache.size >= CACHE_SIZE) cache.delete(cache.keys().next().value!);
  cache.set(userAgent, facts);
  return facts;
}
