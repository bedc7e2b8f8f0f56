// `npm run keygen [-- --name ci --role viewer ...]` from a clone: the same as `dagu-mcp-gateway keygen`.
import { keygen } from '../src/auth/keygen.ts';

process.exitCode = keygen(process.argv.slice(2));
