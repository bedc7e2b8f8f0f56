// The floor for any gateway in Node that asks Dagu on every call (bench:peer's `floor` path): node:http
// in, one undici GET to Dagu, JSON parsed and the answer written as a JSON-RPC result. No validation,
// auth, limits, audit or metrics. Plain JavaScript (no TypeScript loader), run in its own process.
//   FLOOR_PORT, FLOOR_DAGU (origin), FLOOR_PATH (the REST path to read)
import { createServer } from 'node:http';
import { Pool } from 'undici';

const dagu = new Pool(process.env.FLOOR_DAGU, { connections: 32 });
const path = process.env.FLOOR_PATH;

createServer((request, response) => {
  const chunks = [];
  request.on('data', (chunk) => chunks.push(chunk));
  request.on('end', async () => {
    try {
      const message = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      const answer = await dagu.request({ path, method: 'GET', headers: { accept: 'application/json' } });
      const data = JSON.parse(await answer.body.text());
      const result = {
        content: [{ type: 'text', text: 'Dagu read completed.' }],
        structuredContent: { data },
      };
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ jsonrpc: '2.0', id: message.id, result }));
    } catch (error) {
      response.writeHead(500).end(String(error));
    }
  });
}).listen(Number(process.env.FLOOR_PORT), '127.0.0.1', () => process.send?.('listening'));
