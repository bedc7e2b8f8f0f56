# syntax=docker/dockerfile:1
# The gateway on the current Node LTS, compiled to JavaScript. The base image is pinned to one release
# (bump NODE_IMAGE deliberately); the code also runs on Node 20 and 22.
ARG NODE_IMAGE=node:24.20.0-trixie-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json .npmrc ./
# --ignore-scripts: the package's `prepare` builds dist/, and the sources are not copied yet.
RUN npm ci --ignore-scripts --no-audit --no-fund
# Everything the build needs (.dockerignore leaves out tests, benchmarks, deploy files and secrets).
COPY . .
RUN npm run build && npm prune --omit=dev --no-audit --no-fund

# The runtime image: Node, the compiled gateway and its production dependencies, nothing else.
FROM ${NODE_IMAGE}
# glibc's malloc keeps up to 8 arenas per core for the process's threads (the event loop, V8's and
# libuv's helpers); two hold its allocations with 14 MiB less resident memory on Node 24 under
# `npm run soak` (peak 181.7 -> 167.8 MiB, bench/RESULTS.md).
ENV NODE_ENV=production HOST=0.0.0.0 PORT=8090 MALLOC_ARENA_MAX=2
# No package managers at run time (npm, npx, corepack, yarn come with the base image); a folder the
# unprivileged user owns for secrets that an init step writes (docker-compose.yml).
RUN rm -rf /usr/local/lib/node_modules /usr/local/bin/npm /usr/local/bin/npx /usr/local/bin/corepack \
      /usr/local/bin/yarn /usr/local/bin/yarnpkg /opt/yarn-* \
 && install -d -o node -g node -m 0700 /var/lib/dagu-mcp-gateway
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
# dist/ runs on its own: the build copies the Markdown reference topics into it.
COPY --from=build /app/dist ./dist
USER node
EXPOSE 8090
HEALTHCHECK --interval=30s --timeout=3s CMD ["node", "-e", "fetch('http://127.0.0.1:'+process.env.PORT+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# Semi-spaces of 8 MB instead of V8's 16 MB: a smaller young generation keeps resident memory at most
# ~143 MB instead of ~184 MB under `npm run soak` (100 calls/s); 4 MB saved more memory but cost CPU
# in scavenges. Old generation grown by at most half its live size after a full collection
# (--heap-growing-percent=50) instead of up to 4x: under a backlog of heavy reads (soak at 150 calls/s)
# the heap kept ~100 MB of garbage; the flag took the peak RSS from 230 to 141 MiB on Node 20 and from
# 279 to 173 MiB on Node 24, for no measured CPU per call at 100 calls/s (bench/RESULTS.md, soak).
CMD ["node", "--max-semi-space-size=8", "--heap-growing-percent=50", "dist/main.js"]
