import { engineToIso, parseIsoDateTime, toEngineDateTime } from '../timestamps';
import { identifier, jsonLines, type Row, type Storage } from '../storage/storage';
import type { DeliveryStatus, Webhook } from './model';

/** A webhook as stored: the API's fields, its workspace and its signing secret. */
export interface WebhookRecord {
  webhook: Webhook;
  workspaceId: string;
  secret: string;
}

/** A point in acceptance order: the last event a webhook has dealt with. */
export interface Cursor {
  /** The engine's text form, `YYYY-MM-DD hh:mm:ss.ffffff` (UTC), which sorts as it reads. */
  parsedAt: string;
  uuid: string;
}

/** A delivery that needed more than one attempt. Times are Unix milliseconds; 0 for none. */
export interface DeliveryRecord {
  webhookUuid: string;
  id: string;
  eventUuids: string[];
  status: DeliveryStatus;
  attempts: number;
  /** 0 when no HTTP answer came (network error, timeout). */
  lastStatusCode: number;
  lastError: string;
  firstAttemptAt: number;
  lastAttemptAt: number;
  nextAttemptAt: number;
}

const millisText = (ms: number) => toEngineDateTime(BigInt(ms) * 1000n).slice(0, 23);
const textMillis = (text: string) => Number(parseIsoDateTime(text)! / 1000n);

function toWebhookRecord(row: Row): WebhookRecord {
  return {
    webhook: {
      uuid: String(row.uuid),
      url: String(row.url),
      enableBatching: Boolean(row.enableBatching),
      createdAt: engineToIso(String(row.createdAt)),
      eventTypes: row.eventTypes as string[],
      eventNames: row.eventNames as string[],
      flatten: Boolean(row.flatten),
    },
    workspaceId: String(row.workspaceId),
    secret: String(row.secret),
  };
}

function toDeliveryRecord(row: Row): DeliveryRecord {
  return {
    webhookUuid: String(row.webhookUuid),
    id: String(row.deliveryId),
    eventUuids: row.eventUuids as string[],
    status: row.status as DeliveryStatus,
    attempts: Number(row.attempts),
    lastStatusCode: Number(row.lastStatusCode),
    lastError: String(row.lastError),
    firstAttemptAt: textMillis(String(row.firstAttemptAt)),
    lastAttemptAt: textMillis(String(row.lastAttemptAt)),
    nextAttemptAt: textMillis(String(row.nextAttemptAt)),
  };
}

/**
 * The SQL of the webhook tables in the metadata database: `webhooks` and `webhook_deliveries`
 * versioned as workspaces are (ReplacingMergeTree read with FINAL), `webhook_cursors` likewise.
 * Small statements on the write lane, which long reads never hold up.
 */
export class WebhookRecords {
  private readonly meta: string;

  constructor(
    private readonly storage: Storage,
    private readonly metaDatabase: string,
  ) {
    this.meta = identifier(metaDatabase);
  }

  async webhooks(): Promise<WebhookRecord[]> {
    const rows = await this.storage.query(`SELECT * FROM ${this.meta}.webhooks FINAL ORDER BY createdAt, uuid`, {}, 'write');
    return rows.map(toWebhookRecord);
  }

  /** Writes webhooks (or their deletion) as one insert. */
  writeWebhooks(records: readonly WebhookRecord[], version: number, deleted = false): Promise<void> {
    return this.storage.insert(
      this.metaDatabase,
      'webhooks',
      jsonLines(records.map(({ webhook: w, workspaceId, secret }) => ({
        uuid: w.uuid,
        workspaceId,
        url: w.url,
        enableBatching: w.enableBatching,
        eventTypes: w.eventTypes,
        eventNames: w.eventNames,
        flatten: w.flatten,
        secret,
        createdAt: toEngineDateTime(parseIsoDateTime(w.createdAt)!),
        version,
        isDeleted: deleted ? 1 : 0,
      }))),
    );
  }

  async cursors(): Promise<Map<string, Cursor>> {
    const rows = await this.storage.query(`SELECT webhookUuid, parsedAt, uuid FROM ${this.meta}.webhook_cursors FINAL`, {}, 'write');
    return new Map(rows.map((r) => [String(r.webhookUuid), { parsedAt: String(r.parsedAt), uuid: String(r.uuid) }]));
  }

  /** The highest version any process gave a cursor: a new delivery owner's saves must come after it. */
  async latestCursorVersion(): Promise<bigint> {
    const [row] = await this.storage.query(`SELECT toString(max(version)) AS v FROM ${this.meta}.webhook_cursors`, {}, 'write');
    return BigInt(String(row?.v ?? '0'));
  }

  /** Saves the cursors of several webhooks as one insert. */
  saveCursors(cursors: ReadonlyMap<string, Cursor>, version: number): Promise<void> {
    return this.storage.insert(
      this.metaDatabase,
      'webhook_cursors',
      jsonLines([...cursors].map(([webhookUuid, c]) => ({ webhookUuid, parsedAt: c.parsedAt, uuid: c.uuid, version }))),
    );
  }

  saveDelivery(d: DeliveryRecord, version: number): Promise<void> {
    return this.storage.insert(this.metaDatabase, 'webhook_deliveries', jsonLines([
      {
        webhookUuid: d.webhookUuid,
        deliveryId: d.id,
        eventUuids: d.eventUuids,
        status: d.status,
        attempts: d.attempts,
        lastStatusCode: d.lastStatusCode,
        lastError: d.lastError,
        firstAttemptAt: millisText(d.firstAttemptAt),
        lastAttemptAt: millisText(d.lastAttemptAt),
        nextAttemptAt: millisText(d.nextAttemptAt),
        version,
      },
    ]));
  }

  /** A page of a webhook's deliveries, most recent attempt first, optionally of one status. */
  async deliveries(
    webhookUuid: string,
    page: { limit: number; offset: number; status?: DeliveryStatus },
  ): Promise<{ records: DeliveryRecord[]; total: number }> {
    const where = `webhookUuid = {webhookUuid:String}${page.status ? ' AND status = {status:String}' : ''}`;
    const params = { webhookUuid, limit: page.limit, offset: page.offset, ...(page.status ? { status: page.status } : {}) };
    const [rows, count] = await Promise.all([
      this.storage.query(
        `SELECT * FROM ${this.meta}.webhook_deliveries FINAL WHERE ${where}
         ORDER BY lastAttemptAt DESC, deliveryId LIMIT {limit:UInt32} OFFSET {offset:UInt64}`,
        params,
        'write',
      ),
      this.storage.query(`SELECT count() AS total FROM ${this.meta}.webhook_deliveries FINAL WHERE ${where}`, params, 'write'),
    ]);
    return { records: rows.map(toDeliveryRecord), total: Number(count[0]?.total ?? 0) };
  }

  /** Deliveries still being retried beside the queue, for a webhook's actor to resume. */
  async retrying(webhookUuid: string): Promise<DeliveryRecord[]> {
    const rows = await this.storage.query(
      `SELECT * FROM ${this.meta}.webhook_deliveries FINAL WHERE webhookUuid = {webhookUuid:String} AND status = 'retrying' ORDER BY nextAttemptAt`,
      { webhookUuid },
      'write',
    );
    return rows.map(toDeliveryRecord);
  }
}
