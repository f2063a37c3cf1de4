import { join } from 'node:path';

export const PROJECT_ROOT = join(import.meta.dir, '..', '..');
