import { EmbeddedStorage } from '../../src/storage/embedded';
import { ENGINE_DIR } from '../helpers/engine-dir';
import { describeStorageContract } from './storage-contract';

describeStorageContract('embedded (chDB)', async () => {
  const storage = new EmbeddedStorage(ENGINE_DIR, 2);
  return { storage, close: () => storage.close() };
});
