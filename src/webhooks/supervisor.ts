import { Actor } from '../actors/actor';
import { ChangeCounter } from '../coordination/change-counter';
import type { Event } from '../events/model';
import { parseIsoDateTime, toEngineDateTime, toIsoString, type Micros } from '../timestamps';
import { pageWindow } from '../http/pagination';
import { conflict, invalidInput, notFound } from '../http/problem';
import type { Logger } from '../log';
import { MonotonicClock } from '../monotonic-clock';
import type { EgressPolicy } from '../net/egress-policy';
import type { Storage } from '../storage/storage';
import type { Workspace } from '../workspaces/model';
import type { WorkspaceStore } from '../workspaces/workspace-store';
import { DeliveryOwnership, type DeliveryOwnershipOptions } from './delivery-ownership';
import { DeliveryActor, toDelivery, type AttemptVerdict, type DeliverySettings } from './delivery-actor';
import { CursorBatcher } from './cursor-batcher';
import { compareCursors } from './event-feed';
import { WILDCARD, type CreatedWebhook, type Delivery, type DeliveryStatus, type TestDelivery, type Webhook, type WebhookInput } from './model';
import { generateSecret } from './payload';
import { sendTestEvent } from './test-delivery';
import { WebhookRecords, type Cursor, type WebhookRecord } from './webhook-records';

export interface WebhookSupervisorOptions {
  metaDatabase: string;
  /** parsedAt of the oldest event still being inserted (the ingest buffer's frontier). */
  frontier(): Micros | undefined;
  /** Whether this process delivers (WEBHOOK_DELIVERY), the lease's length and whether the metadata is on a cluster. */
  mode: DeliveryOwnershipOptions['mode'];
  leaseMs: number;
  cluster: boolean;
  /** How often webhooks are re-read in full, to see those made or deleted by other processes. */
  refreshMs: number;
  /** On a server: how often the webhooks' change counter is read, so other processes' changes apply within about this long. */
  changePollMs?: number;
  delivery: DeliverySettings;
  /** Where deliveries may connect; also checks a webhook's URL when it is created. */
  egress: EgressPolicy;
  /** Told of each delivery attempt's verdict (for metrics). */
  onDeliveryAttempt?: (verdict: AttemptVerdict) => void;
}

/** A limit that keeps one workspace from starting actors without end. */
const MAX_WEBHOOKS_PER_WORKSPACE = 100;
/** How often the cursors that moved are saved; a crash re-sends at most this much. */
const CURSOR_SAVE_MS = 1000;
/** Webhook changes waiting, at most; beyond it callers get 503. */
const MAILBOX_CAPACITY = 1000;
/** The smallest UUID: a cursor at a moment, before every event accepted in it. */
const NIL_UUID = '00000000-0000-0000-0000-000000000000';

type Work = () => Promise<unknown>;

/**
 * The webhook supervisor: owns the webhooks (stored in the metadata database) and runs one
 * delivery actor per webhook when this process delivers: started at boot, on creation and when
 * another process creates one; stopped on deletion, with their workspace, and at shutdown. It
 * hands each committed batch to the actors of its workspace, and saves the actors' cursors.
 * Changes run one at a time through its mailbox.
 */
export class WebhookSupervisor {
  private webhooks = new Map<string, WebhookRecord>();
  private readonly actors = new Map<string, DeliveryActor>();
  private readonly saved = new Map<string, Cursor>();
  private readonly mailbox = new Actor<Work, unknown>((work) => work(), MAILBOX_CAPACITY);
  private readonly records: WebhookRecords;
  private readonly versions = new MonotonicClock();
  private readonly timers: Array<ReturnType<typeof setInterval>> = [];
  private readonly ownership: DeliveryOwnership;
  private readonly delivery: WebhookSupervisorOptions['delivery'];
  private readonly cursorBatcher = new CursorBatcher((cursors) => this.writeDeliveredCursors(cursors));
  /** Webhook changes announced to the other processes on the same server (absent with the embedded engine). */
  private readonly changes: ChangeCounter | undefined;

  constructor(
    private readonly storage: Storage,
    private readonly store: WorkspaceStore,
    /** The clock that gives events their parsedAt; a new webhook starts at its next tick. */
    private readonly acceptance: MonotonicClock,
    private readonly options: WebhookSupervisorOptions,
    private readonly log: Logger,
  ) {
    this.records = new WebhookRecords(storage, options.metaDatabase);
    store.onRemove((workspace) => this.removeWorkspace(workspace.workspaceId));
    // A workspace made or deleted by another process (seen through the change counter): its
    // webhooks' actors start or stop now rather than at the next webhook refresh.
    store.onDatabasesChanged(() => void this.exclusive(() => this.reconcile()).catch((err) => log.warn('webhook refresh failed', { err })));
    this.ownership = new DeliveryOwnership(storage, options, log);
    this.ownership.onChange((held) => (held ? void this.exclusive(() => this.reconcile()).catch((err) => log.warn('starting deliveries failed', { err })) : this.dropActors()));
    if (storage.mode === 'server') this.changes = new ChangeCounter(storage, options.metaDatabase, 'webhooks', log);
    this.delivery = this.ownership.settings(options.delivery);
  }

  async start(): Promise<void> {
    await this.ownership.start();
    await this.reconcile();
    const every = (ms: number, work: () => Promise<void>, what: string) => {
      const timer = setInterval(() => work().catch((err) => this.log.warn(`${what} failed`, { err })), ms);
      timer.unref();
      this.timers.push(timer);
    };
    every(this.options.refreshMs, () => this.exclusive(() => this.reconcile()), 'webhook refresh');
    if (this.changes && this.options.changePollMs) {
      this.changes.watch(this.options.changePollMs, async () => {
        await this.exclusive(() => this.reconcile());
        return true;
      });
    }
    if (this.options.mode !== 'off') every(CURSOR_SAVE_MS, () => this.saveCursors(), 'saving webhook cursors');
  }

  /**
   * The lease is lost: every actor stops sending at once (requests in flight are aborted), and
   * no cursor of this process is saved any more, so the new owner's are never overwritten.
   */
  private dropActors(): void {
    const actors = [...this.actors.values()];
    this.actors.clear();
    this.saved.clear();
    for (const actor of actors) void actor.stop();
  }

  /** Stops the actors (an attempt in flight is sent again after a restart) and saves their cursors. */
  async stop(): Promise<void> {
    for (const timer of this.timers) clearInterval(timer);
    this.changes?.stop();
    await this.mailbox.stop();
    await Promise.all([...this.actors.values()].map((a) => a.stop()));
    await this.saveCursors();
    this.actors.clear();
    await this.ownership.stop();
  }

  /** Events just committed to `database`: each actor of that workspace takes what it wants. */
  committed(database: string, events: readonly Event[]): void {
    for (const actor of this.actors.values()) if (actor.database === database) actor.offer(events);
  }

  /** Whether a webhook of this process delivers `database`'s events (else `committed` may be skipped). */
  listensTo(database: string): boolean {
    for (const actor of this.actors.values()) if (actor.database === database) return true;
    return false;
  }

  /** Drops the events of `database` that `erased` names from every actor's memory, before they are sent. */
  discard(database: string, erased: (event: Event) => boolean): void {
    for (const actor of this.actors.values()) if (actor.database === database) actor.discard(erased);
  }

  /** The workspace's webhooks, oldest first. */
  list(workspaceId: string): Webhook[] {
    return [...this.webhooks.values()].filter((r) => r.workspaceId === workspaceId).map((r) => r.webhook);
  }

  /** Deliveries of this process's actors that failed and wait for a retry. */
  retriesPending(): number {
    let pending = 0;
    for (const actor of this.actors.values()) pending += actor.retriesPending;
    return pending;
  }

  /** Events a webhook's actor holds in memory, for operators and tests. */
  buffered(uuid: string): number {
    return this.actors.get(uuid)?.buffered ?? 0;
  }

  async create(workspace: Workspace, input: WebhookInput): Promise<CreatedWebhook> {
    // Before the mailbox: checking may wait on a name server.
    const refused = await this.options.egress.refusal(new URL(input.url));
    if (refused) throw invalidInput(`the webhook url is not allowed: ${refused}`, [{ pointer: '/url', detail: refused }]);
    return this.exclusive(async () => {
      if (this.list(workspace.workspaceId).length >= MAX_WEBHOOKS_PER_WORKSPACE) {
        throw conflict(`a workspace has at most ${MAX_WEBHOOKS_PER_WORKSPACE} webhooks; delete one first`);
      }
      // Events accepted from the next tick on are this webhook's: its cursor starts there.
      const start = this.acceptance.next();
      const record: WebhookRecord = {
        webhook: {
          uuid: crypto.randomUUID(),
          url: input.url,
          enableBatching: input.enableBatching ?? false,
          createdAt: toIsoString(start),
          eventTypes: [...new Set(input.eventTypes ?? [WILDCARD])],
          eventNames: [...new Set(input.eventNames ?? [WILDCARD])],
          flatten: input.flatten ?? false,
        },
        workspaceId: workspace.workspaceId,
        secret: generateSecret(),
      };
      const cursor: Cursor = { parsedAt: toEngineDateTime(start), uuid: NIL_UUID };
      const version = this.nextVersion();
      await this.records.saveCursors(new Map([[record.webhook.uuid, cursor]]), version);
      await this.records.writeWebhooks([record], version);
      this.webhooks.set(record.webhook.uuid, record);
      this.saved.set(record.webhook.uuid, cursor);
      await this.startActor(record, cursor);
      await this.announce(version);
      this.log.info('webhook created', { webhook: record.webhook.uuid, workspaceId: workspace.workspaceId });
      return { ...record.webhook, secret: record.secret };
    });
  }

  /** Deletes a webhook of the workspace; its deliveries stop before this returns. */
  remove(workspaceId: string, uuid: string): Promise<Webhook> {
    return this.exclusive(async () => {
      const record = this.find(workspaceId, uuid);
      const version = this.nextVersion();
      await this.records.writeWebhooks([record], version, true);
      this.webhooks.delete(uuid);
      await this.stopActor(uuid);
      await this.announce(version);
      this.log.info('webhook deleted', { webhook: uuid, workspaceId });
      return record.webhook;
    });
  }

  /** A page of a webhook's deliveries that needed more than one attempt, the one holding the queue first. */
  async deliveries(workspaceId: string, uuid: string, query: { limit?: string; offset?: string; status?: DeliveryStatus }) {
    this.find(workspaceId, uuid);
    const { limit, offset } = pageWindow(query);
    const held = query.status === undefined || query.status === 'retrying' ? this.actors.get(uuid)?.currentDelivery() : undefined;
    const shift = held ? 1 : 0;
    const stored = await this.records.deliveries(uuid, {
      limit: Math.max(0, limit - (offset === 0 ? shift : 0)),
      offset: Math.max(0, offset - shift),
      ...(query.status ? { status: query.status } : {}),
    });
    const results: Delivery[] = [...(held && offset === 0 ? [held] : []), ...stored.records.map((r) => toDelivery(r, false))];
    return { results: results.slice(0, limit), limit, offset, total: stored.total + shift };
  }

  /** Sends the webhook one synthetic event now, outside its queue (`POST /webhooks/{uuid}/test`). */
  sendTest(workspaceId: string, uuid: string): Promise<TestDelivery> {
    const record = this.find(workspaceId, uuid);
    return sendTestEvent(record, this.options.delivery.timeoutMs, this.options.egress, (details) =>
      this.log.info('webhook test event not delivered', { webhook: uuid, details }),
    );
  }

  private find(workspaceId: string, uuid: string): WebhookRecord {
    const record = this.webhooks.get(uuid);
    if (!record || record.workspaceId !== workspaceId) throw notFound(`no webhook ${uuid}`);
    return record;
  }

  /** The workspace is being deleted: its webhooks are deleted and stop at once. */
  private removeWorkspace(workspaceId: string): Promise<void> {
    return this.exclusive(async () => {
      const doomed = [...this.webhooks.values()].filter((r) => r.workspaceId === workspaceId);
      for (const record of doomed) {
        this.webhooks.delete(record.webhook.uuid);
        await this.stopActor(record.webhook.uuid);
      }
      if (doomed.length === 0) return;
      const version = this.nextVersion();
      await this.records.writeWebhooks(doomed, version, true);
      await this.announce(version);
    });
  }

  /**
   * Re-reads webhooks and brings the actors in line: one for every webhook of a live workspace,
   * none for the rest. The acceptance clock is moved past every saved cursor, so no event can be
   * accepted with a parsedAt a webhook has already passed (a clock stepped back over a restart).
   */
  private async reconcile(): Promise<void> {
    this.webhooks = new Map((await this.records.webhooks()).map((r) => [r.webhook.uuid, r]));
    if (!this.ownership.delivering) return this.dropActors();
    for (const uuid of this.actors.keys()) {
      const record = this.webhooks.get(uuid);
      if (!record || !this.store.find(record.workspaceId)) await this.stopActor(uuid);
    }
    const missing = [...this.webhooks.values()].filter((r) => !this.actors.has(r.webhook.uuid) && this.store.find(r.workspaceId));
    if (missing.length === 0) return;
    const cursors = await this.records.cursors();
    for (const cursor of cursors.values()) this.acceptance.advancePast(parseIsoDateTime(cursor.parsedAt)!);
    // Another owner may have saved these cursors, by its own clock: this one's saves must win.
    if (this.ownership.elected) this.versions.advancePast(await this.records.latestCursorVersion());
    for (const record of missing) {
      const cursor = cursors.get(record.webhook.uuid) ?? { parsedAt: toEngineDateTime(parseIsoDateTime(record.webhook.createdAt)!), uuid: NIL_UUID };
      this.saved.set(record.webhook.uuid, cursor);
      await this.startActor(record, cursor);
    }
  }

  private async startActor(record: WebhookRecord, cursor: Cursor): Promise<void> {
    const workspace = this.store.find(record.workspaceId);
    if (!this.ownership.delivering || !workspace) return;
    const parked = await this.records.retrying(record.webhook.uuid);
    const deps = {
      storage: this.storage,
      records: this.records,
      versions: this.versions,
      log: this.log,
      egress: this.options.egress,
      frontier: this.options.frontier,
      onAttempt: this.options.onDeliveryAttempt,
      ...(this.ownership.elected ? { mayDeliver: () => this.ownership.delivering, onCursorMoved: (c: Cursor) => this.saveCursor(record.webhook.uuid, c) } : {}),
    };
    this.actors.set(record.webhook.uuid, new DeliveryActor(record, workspace.databaseName, cursor, parked, this.delivery, deps));
  }

  private async stopActor(uuid: string): Promise<void> {
    const actor = this.actors.get(uuid);
    this.actors.delete(uuid);
    this.saved.delete(uuid);
    await actor?.stop();
  }

  /**
   * Saves one actor's cursor right after its delivery (elected owner only): a process killed
   * without warning then leaves at most the request in flight to be sent again, with the same
   * webhook-id, rather than up to a second's worth of deliveries.
   */
  private async saveCursor(uuid: string, cursor: Cursor): Promise<void> {
    if (!this.ownership.delivering || !this.actors.has(uuid)) return;
    await this.cursorBatcher.save(uuid, cursor);
  }

  /** One insert of cursors saved right after their deliveries, while this process holds the lease. */
  private async writeDeliveredCursors(cursors: ReadonlyMap<string, Cursor>): Promise<void> {
    if (!this.ownership.delivering) return;
    await this.records.saveCursors(cursors, this.nextVersion());
    for (const [uuid, cursor] of cursors) if (this.actors.has(uuid)) this.saved.set(uuid, cursor);
  }

  /** Saves, in one insert, the cursors that moved since they were last saved. */
  private async saveCursors(): Promise<void> {
    if (!this.ownership.delivering) return;
    const moved = new Map<string, Cursor>();
    for (const [uuid, actor] of this.actors) {
      const last = this.saved.get(uuid);
      if (!last || compareCursors(actor.position, last) !== 0) moved.set(uuid, actor.position);
    }
    if (moved.size === 0) return;
    await this.records.saveCursors(moved, this.nextVersion());
    for (const [uuid, cursor] of moved) if (this.actors.has(uuid)) this.saved.set(uuid, cursor);
  }

  /** Tells the other processes that webhooks changed; a failure only delays them to their full re-read. */
  private async announce(version: number): Promise<void> {
    await this.changes?.bump(version).catch((err) => this.log.warn('webhook change counter not moved; other processes see the change at their next full re-read', { err }));
  }

  private nextVersion(): number {
    return Number(this.versions.next());
  }

  private exclusive<T>(work: () => Promise<T>): Promise<T> {
    return this.mailbox.ask(work) as Promise<T>;
  }
}
