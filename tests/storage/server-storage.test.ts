import { ServerStorage } from '../../src/storage/server';
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
