// The floor for any gateway in Node that asks Dagu on every call (bench:peer's and bench:heavy's
// `floor` path): node:http in, the same REST GETs the gateway makes for the read (its cache of
// finished logs off), each answer parsed as JSON, and the result written as a JSON-RPC answer. No
// validation, auth, limits, audit or metrics. Plain JavaScript (no TypeScript loader), its own process.
//   FLOOR_PORT, FLOOR_DAGU (origin), FLOOR_API_BASE (`/api/v1`), FLOOR_SERVER (`fastify`: the same in
//   a bare Fastify app, else node:http)
// The REST calls per `dagu_read` target (src/read/targets/*.ts, a caller with unrestricted access):
//   run       GET /dag-runs/{name}/{dagRunId}
//   step_log  GET …/steps/{stepName}/log?stream=stdout&<tail|head|offset|limit> and stream=stderr, at once
//   dags      GET /dags?<query>            runs  GET /dag-runs?<query>
// `initialize` gets a minimal answer and notifications 202, so an MCP client can call it too.
import { createServer } from 'node:http';
import { Pool } from 'undici';

const dagu = new Pool(process.env.FLOOR_DAGU, { connections: 32 });
const base = process.env.FLOOR_API_BASE ?? '/api/v1';
const esc = encodeURIComponent;

async function get(path) {
  const answer = await dagu.request({
    path: `${base}${path}`,
    method: 'GET',
    headers: { accept: 'application/json' },
  });
  const body = JSON.parse(await answer.body.text());
  if (answer.statusCode !== 200) throw new Error(`Dagu answered ${answer.statusCode}`);
  return body;
}

async function read(args) {
  const query = typeof args.query === 'string' && args.query !== '' ? args.query : '';
  switch (args.target) {
    case 'run':
      return (await get(`/dag-runs/${esc(args.name)}/${esc(args.dagRunId)}`)).dagRunDetails;
    case 'dags':
      return get(`/dags${query ? `?${query}` : ''}`);
    case 'runs':
      return get(`/dag-runs${query ? `?${query}` : ''}`);
    case 'step_log': {
      const position = query || 'tail=1000';
      const log = `/dag-runs/${esc(args.name)}/${esc(args.dagRunId)}/steps/${esc(args.stepName)}/log`;
      const [out, err] = await Promise.all([
        get(`${log}?stream=stdout&${position}`),
        get(`${log}?stream=stderr&${position}`),
      ]);
      return {
        stdoutContent: out.content ?? '',
        stderrContent: err.content ?? '',
        lineCount: out.lineCount ?? 0,
        totalLines: out.totalLines ?? 0,
        hasMore: out.hasMore === true,
      };
    }
    default:
      throw new Error(`the floor does not read ${args.target}`);
  }
}

async function answer(message) {
  if (message.method === 'initialize') {
    return {
      protocolVersion: message.params?.protocolVersion,
      capabilities: { tools: {} },
      serverInfo: { name: 'floor', version: '1' },
    };
  }
  const data = await read(message.params?.arguments ?? {});
  return { content: [{ type: 'text', text: 'Dagu read completed.' }], structuredContent: { data } };
}

const port = Number(process.env.FLOOR_PORT);
const listening = () => process.send?.('listening');

if (process.env.FLOOR_SERVER === 'fastify') {
  // The same in a bare Fastify app (its own JSON body parser and serializer, no hooks, no logger):
  // what the web framework adds to the floor.
  const { default: Fastify } = await import('fastify');
  const app = Fastify({ logger: false });
  app.post('/mcp', async (request, reply) => {
    const message = request.body;
    if (message.id === undefined) return reply.code(202).send();
    return { jsonrpc: '2.0', id: message.id, result: await answer(message) };
  });
  await app.listen({ port, host: '127.0.0.1' });
  listening();
} else {
  createServer((request, response) => {
    if (request.method !== 'POST') {
      response.writeHead(405).end();
      return;
    }
    const chunks = [];
    request.on('data', (chunk) => chunks.push(chunk));
    request.on('end', async () => {
      try {
        const message = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        if (message.id === undefined) {
          response.writeHead(202).end();
          return;
        }
        const result = await answer(message);
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ jsonrpc: '2.0', id: message.id, result }));
      } catch (error) {
        response.writeHead(500).end(String(error));
      }
    });
  }).listen(port, '127.0.0.1', listening);
}

// Exit on SIGTERM (not die of it), so that a `--cpu-prof` run (bench:profile) writes its profile.
process.on('SIGTERM', () => process.exit(0));
