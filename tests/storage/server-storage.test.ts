import { expect, test } from 'bun:test';
import { ServerStorage } from '../../src/storage/server';
import { StorageOutcomeUnknownError, StorageUnavailableError } from '../../src/storage/storage';
import { freePort } from '../fixtures/webhook-receiver';
import { rejection } from '../helpers/rejection';
import { ENGINE_DIR } from '../helpers/engine-dir';
import { startClickHouseFixture } from '../fixtures/clickhouse-http-fixture';
import { describeStorageContract } from './storage-contract';

describeStorageContract('server (@clickhouse/client over HTTP)', async () => {
  const fixture = await startClickHouseFixture(ENGINE_DIR);
  const storage = new ServerStorage({ url: fixture.url, username: 'default', password: '', requestTimeoutMs: 10_000 });
  return {
    storage,
    close: async () => {
      await storage.close();
      await fixture.stop();
    },
  };
});

const serverAt = (url: string) => new ServerStorage({ url, username: 'default', password: '', requestTimeoutMs: 300 });

test('a refused connection is a failure known to have stored nothing', async () => {
  const storage = serverAt(`http://127.0.0.1:${await freePort()}`);
  const err = await rejection(storage.insert('db', 'events', ['{}']));
  expect(err).toBeInstanceOf(StorageUnavailableError);
  expect(err).not.toBeInstanceOf(StorageOutcomeUnknownError);
  await storage.close();
});

test('a statement sent but never answered (timeout, reset) has an unknown outcome', async () => {
  const silent = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data() {} } });
  const resetting = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data: (socket) => socket.terminate() } });
  for (const server of [silent, resetting]) {
    const storage = serverAt(`http://127.0.0.1:${server.port}`);
    expect(await rejection(storage.insert('db', 'events', ['{}']))).toBeInstanceOf(StorageOutcomeUnknownError);
    await storage.close();
    server.stop(true);
  }
});
