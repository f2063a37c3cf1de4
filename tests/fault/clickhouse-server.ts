/**
 * The ClickHouse HTTP fixture as a process of its own, so the storage-fault scenario can kill
 * it, freeze it and start it again on the same port and data: `bun clickhouse-server.ts <dir> <port>`.
 * Prints `ready` once it listens.
 */
import { startClickHouseFixture } from '../fixtures/clickhouse-http-fixture';

const [dir, port] = process.argv.slice(2);
await startClickHouseFixture(dir!, Number(port));
console.log('ready');
