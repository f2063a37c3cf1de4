import type { Server } from 'elysia/universal';
import { parseAddress, type CidrList } from '../net/address-ranges';
import { gatedPeer } from './connection-gate';

/** Peer addresses of requests served by a runtime whose server Elysia does not see (Deno). */
const peers = new WeakMap<Request, string>();

/** Records the address `request` came from, for a runtime that hands it over beside the request. */
export function rememberPeer(request: Request, address: string): void {
  peers.set(request, address);
}

/**
 * The client's address: the peer's, or, when the peer is a trusted proxy, the address that
 * proxy saw: the right-most entry of `X-Forwarded-For` that is not itself a trusted proxy (the
 * entries to its left were written by the client and prove nothing).
 */
export function clientAddress(request: Request, server: Server | null, trustedProxies: CidrList): string {
  // Under Bun the server's peer is the connection gate; the client is the gate's peer.
  const ip = server?.requestIP(request);
  const peer = (ip ? (gatedPeer(ip.address, ip.port) ?? ip.address) : peers.get(request)) ?? 'unknown';
  if (trustedProxies.size === 0) return peer;
  const peerAddress = parseAddress(peer);
  if (!peerAddress || !trustedProxies.contains(peerAddress)) return peer;
  const forwarded = request.headers.get('x-forwarded-for');
  if (!forwarded) return peer;
  const hops = forwarded.split(',');
  let client = peer;
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = parseAddress(hops[i]!.trim());
    if (!hop) break;
    client = hop.toString();
    if (!trustedProxies.contains(hop)) break;
  }
  return client;
}

/**
 * The key a client's requests are counted under: its address, or for IPv6 its /64 network,
 * which one subscriber usually holds whole (else each client could count as millions).
 */
export function addressKey(address: string): string {
  if (!address.includes(':')) return address;
  const parsed = parseAddress(address);
  if (!parsed || parsed.kind() !== 'ipv6') return address;
  const v6 = parsed as import('ipaddr.js').IPv6;
  if (v6.isIPv4MappedAddress()) return v6.toIPv4Address().toString();
  return `${v6.toNormalizedString().split(':').slice(0, 4).join(':')}::/64`;
}
