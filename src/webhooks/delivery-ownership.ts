import type { WebhookDeliveryMode } from '../config';
import { Lease } from '../coordination/lease';
import type { Logger } from '../log';
import type { Storage } from '../storage/storage';
import type { DeliverySettings } from './delivery-actor';

export interface DeliveryOwnershipOptions {
  metaDatabase: string;
  /** `on`, `off`, or `auto`: on a server, the process holding the lease; with the embedded engine, this one. */
  mode: WebhookDeliveryMode;
  /** The lease's length (ms), in `auto` mode on a server. */
  leaseMs: number;
  /** The metadata is replicated over a cluster (the lease then reads and writes by quorum). */
  cluster: boolean;
}

/**
 * With an elected owner several processes accept events, so the owner reads them from the table
 * once they are this old (ms), unless WEBHOOK_SETTLE_MS says otherwise: above an insert's time
 * plus the processes' clock skew.
 */
const SHARED_SETTLE_MS = 1000;
/** The lease's name in the metadata database. */
const DELIVERY_LEASE = 'webhook-delivery';

/** Whether this process delivers webhooks: as configured, or while it holds the delivery lease. */
export class DeliveryOwnership {
  /** The delivery lease, when the owner is elected (`auto` on a server). */
  private readonly lease: Lease | undefined;

  constructor(storage: Storage, private readonly options: DeliveryOwnershipOptions, log: Logger) {
    if (options.mode === 'auto' && storage.mode === 'server') {
      this.lease = new Lease(storage, { metaDatabase: options.metaDatabase, name: DELIVERY_LEASE, leaseMs: options.leaseMs, cluster: options.cluster }, log);
    }
  }

  /** Whether the owner is elected (so ownership can come and go, and several processes accept events). */
  get elected(): boolean {
    return this.lease !== undefined;
  }

  /** Whether this process delivers now. */
  get delivering(): boolean {
    return this.lease ? this.lease.holds() : this.options.mode !== 'off';
  }

  /** Told when an elected owner gains or loses the ownership. */
  onChange(listener: (held: boolean) => void): void {
    this.lease?.onChange(listener);
  }

  /** The delivery settings in force: an elected owner reads events from the table once settled. */
  settings(delivery: DeliverySettings): DeliverySettings {
    return this.lease && delivery.settleMs === 0 ? { ...delivery, settleMs: SHARED_SETTLE_MS } : delivery;
  }

  start(): Promise<void> {
    return this.lease?.start() ?? Promise.resolve();
  }

  /** Releases the lease, if held, so that another process need not wait it out. */
  stop(): Promise<void> {
    return this.lease?.stop() ?? Promise.resolve();
  }
}
