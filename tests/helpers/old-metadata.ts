import { silentLogger } from '../../src/log';
import { metaMigrations } from '../../src/storage/migrations/meta';
import { MigrationRunner } from '../../src/storage/migrations/runner';
import { uniqueName } from './engine-dir';
import { startTestService, type TestService } from './test-service';

/**
 * A service started over a metadata database as an earlier release left it: migrations 1 to
 * `version` applied, and one default workspace row written in that release's shape. Answers the
 * service and the workspace's database; the caller stops the service.
 */
export async function serviceOverOldMetadata(svc: TestService, version: number): Promise<{ upgraded: TestService; database: string }> {
  const meta = uniqueName(`meta_v${version}`);
  const runner = new MigrationRunner(svc.storage, meta, '', silentLogger);
  await runner.bootstrap();
  await runner.apply(meta, metaMigrations.filter((m) => m.version <= version));
  const database = uniqueName(`ws_v${version}`);
  await svc.storage.command(
    `INSERT INTO ${meta}.workspaces (workspaceId, name, databaseName, isDefault, properties, createdAt, version, isDeleted)
     VALUES ({id:String}, 'Default', {database:String}, true, '', now64(6), 1, 0)`,
    { id: crypto.randomUUID(), database },
  );
  return { upgraded: await startTestService({ META_DATABASE: meta, DEFAULT_WORKSPACE_DATABASE: database }), database };
}
