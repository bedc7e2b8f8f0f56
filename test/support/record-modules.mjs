// Loaded with `node --import`: appends the URL of every module the process imports through the ESM
// loader to the file named by RECORD_MODULES_FILE (tests check what a command does not load).
import { register } from 'node:module';

register('./record-modules-hooks.mjs', import.meta.url, { data: { file: process.env.RECORD_MODULES_FILE } });
