import { crc32 } from 'node:zlib';

/**
 * A record of the write-ahead log: `[u32 payload length][u32 CRC-32 of the payload][payload]`,
 * little-endian. The checksum tells a record cut by a crash (or damaged on disk) from a whole
 * one, so recovery keeps exactly the records that were written in full.
 */
export const HEADER_BYTES = 8;
/** No record is larger: a length beyond it is damage, not a record (an import batch is far smaller). */
export const MAX_PAYLOAD_BYTES = 1024 ** 3;

/** The record of `payload`; text is written as UTF-8 straight into the record. */
export function encodeRecord(payload: Uint8Array | string): Buffer {
  const length = typeof payload === 'string' ? Buffer.byteLength(payload) : payload.byteLength;
  const record = Buffer.allocUnsafe(HEADER_BYTES + length);
  if (typeof payload === 'string') record.write(payload, HEADER_BYTES);
  else record.set(payload, HEADER_BYTES);
  record.writeUInt32LE(length, 0);
  // The checksum of text is that of its UTF-8 bytes, without a view of the record made for it.
  record.writeUInt32LE(crc32(payload), 4);
  return record;
}

export interface ScannedRecord {
  /** Where the record starts in the segment. */
  offset: number;
  /** Its bytes on disk, header included. */
  length: number;
  payload: Uint8Array;
}

export interface Scan {
  records: ScannedRecord[];
  /** Bytes of whole, intact records from the start: what recovery keeps. */
  intactBytes: number;
  /** Why the scan stopped before the end, if it did. */
  damage?: string;
}

/** Reads the records of a segment's bytes, up to the first one that is cut short or fails its checksum. */
export function scanRecords(bytes: Uint8Array): Scan {
  const view = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const records: ScannedRecord[] = [];
  let offset = 0;
  while (offset < view.byteLength) {
    if (view.byteLength - offset < HEADER_BYTES) return { records, intactBytes: offset, damage: `a record header cut short at byte ${offset}` };
    const length = view.readUInt32LE(offset);
    if (length > MAX_PAYLOAD_BYTES) return { records, intactBytes: offset, damage: `an impossible record length (${length}) at byte ${offset}` };
    const end = offset + HEADER_BYTES + length;
    if (end > view.byteLength) return { records, intactBytes: offset, damage: `a record cut short at byte ${offset} (${view.byteLength - offset} of ${HEADER_BYTES + length} bytes)` };
    const payload = view.subarray(offset + HEADER_BYTES, end);
    if (crc32(payload) !== view.readUInt32LE(offset + 4)) return { records, intactBytes: offset, damage: `a record failing its checksum at byte ${offset}` };
    records.push({ offset, length: HEADER_BYTES + length, payload });
    offset = end;
  }
  return { records, intactBytes: offset };
}
