// After `tsc -p tsconfig.build.json`: copies what the compiled gateway reads at run time but tsc does
// not emit (the Markdown reference topics) into dist/, so dist/ runs on its own (the package's bin).
import { cpSync } from 'node:fs';

cpSync('src/reference/topics', 'dist/reference/topics', { recursive: true });
