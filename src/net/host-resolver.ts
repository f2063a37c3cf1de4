import { lookup } from 'node:dns/promises';

/**
 * Turns a host name into the addresses a connection to it may use. The service's own is the
 * system's resolver; tests give one of their own to play a DNS server that changes its answer.
 */
export interface HostResolver {
  resolve(host: string): Promise<string[]>;
}

/** The operating system's resolver (getaddrinfo: /etc/hosts, then DNS), every address it gives. */
export const systemResolver: HostResolver = {
  async resolve(host) {
    return (await lookup(host, { all: true, verbatim: true })).map((a) => a.address);
  },
};
