# The service on the embedded engine, data in a volume.
#   docker build -t event-analytics .
#   docker run -p 4000:4000 -v analytics-data:/data \
#     -e PUBLIC_API_KEYS=pk_... -e PRIVATE_API_KEYS=sk_... event-analytics
# glibc bases: the engine ships as a linux-x64-gnu library (libchdb.so) inside the chdb package.

# Production dependencies only: the engine, Bun (which runs the service) and the HTTP stack.
FROM node:20-bookworm-slim AS dependencies
WORKDIR /app
COPY package.json package-lock.json ./
# npm can fail inside a build and still exit 0 with an incomplete node_modules: check the two
# pieces the service cannot start without.
RUN npm install --omit=dev --no-audit --no-fund \
 && test -x node_modules/.bin/bun \
 && test -f node_modules/@chdb/lib-linux-x64-gnu/libchdb.so \
 && rm -rf /root/.npm

# The running image: no Node.js, npm, TypeScript, tests or benchmarks; Bun runs the sources.
FROM debian:bookworm-slim
LABEL org.opencontainers.image.title="event-analytics" \
      org.opencontainers.image.description="Self-hosted event collection and analytics on embedded ClickHouse" \
      org.opencontainers.image.version="0.2.0" \
      org.opencontainers.image.licenses="UNLICENSED"
# A fixed uid so that a directory mounted from the host can be given to it (chown 10001).
RUN groupadd --system --gid 10001 analytics \
 && useradd --system --uid 10001 --gid analytics --home-dir /data --shell /usr/sbin/nologin analytics \
 && mkdir /data && chown analytics:analytics /data
WORKDIR /app
# Owned by root and read-only to the service: only /data is written.
COPY --from=dependencies /app/node_modules ./node_modules
COPY package.json tsconfig.json bunfig.toml .env.defaults ./
COPY src ./src
# The tracker served at /script.js, built from tracker/src and committed (npm run build:tracker).
COPY tracker/dist ./tracker/dist

# production: the shipped development keys are refused at start (set your own). Bun reads
# UV_THREADPOOL_SIZE once at start: a thread for every engine session (src/storage/engine-threads.ts).
ENV NODE_ENV=production DATA_DIR=/data HOST=0.0.0.0 PORT=4000 UV_THREADPOOL_SIZE=64
VOLUME ["/data"]
EXPOSE 4000
USER analytics

HEALTHCHECK --interval=10s --timeout=5s --start-period=30s --retries=3 \
  CMD ["/app/node_modules/.bin/bun", "src/healthcheck.ts"]
# The service flushes accepted events and closes the engine on SIGTERM (docker stop).
STOPSIGNAL SIGTERM
CMD ["/app/node_modules/.bin/bun", "src/main.ts"]
