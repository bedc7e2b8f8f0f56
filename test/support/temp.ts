import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const createdDirs: string[] = [];

/** A fresh temp folder, removed when the test process exits. */
export function tempDir(prefix = 'gateway-test-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  if (createdDirs.length === 0) {
    process.once('exit', () => {
      for (const created of createdDirs) rmSync(created, { recursive: true, force: true });
    });
  }
  createdDirs.push(dir);
  return dir;
}

/** Writes `text` to `name` in `dir` and returns the file's path. */
export function writeTemp(dir: string, name: string, text: string): string {
  const file = join(dir, name);
  writeFileSync(file, text);
  return file;
}
