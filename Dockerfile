# One image: the service on the embedded engine, data in a volume.
#   docker build -t event-analytics .
#   docker run -p 4000:4000 -v analytics-data:/data event-analytics
# glibc base: the engine ships as a linux-x64-gnu binary (libchdb.so) inside the chdb package.
FROM node:20-bookworm-slim

WORKDIR /app
ENV NODE_ENV=production

COPY package.json package-lock.json ./
# Dev dependencies included: `bun` itself comes from npm and runs the service.
RUN npm install --no-audit --no-fund && npm cache clean --force

COPY tsconfig.json bunfig.toml .env.defaults ./
COPY src ./src

ENV DATA_DIR=/data HOST=0.0.0.0 PORT=4000
VOLUME ["/data"]
EXPOSE 4000

# The service flushes accepted events and closes the engine on SIGTERM (docker stop).
STOPSIGNAL SIGTERM
CMD ["node_modules/.bin/bun", "src/main.ts"]
