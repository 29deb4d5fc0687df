# syntax=docker/dockerfile:1
# Build: dependencies, Prisma client, TypeScript, the admin console's bundle (dist/console).
FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
COPY scripts ./scripts
COPY prisma ./prisma
COPY prisma.config.ts ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY console ./console
RUN npm run build

# Runtime: production dependencies only, the compiled service (the generated
# Prisma client is compiled into dist/), and the SQL migrations.
FROM node:24-bookworm-slim AS runtime
ENV NODE_ENV=production HOST=0.0.0.0 PORT=3000 DATA_DIR=/data
WORKDIR /app
COPY package.json package-lock.json ./
COPY scripts ./scripts
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist ./dist
COPY prisma/migrations ./prisma/migrations
COPY sample ./sample
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 3000
# Ready = the database answers within a second and the instance is not stopping.
# node, not curl: the slim image has no curl.
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/readyz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# SIGTERM (docker stop) stops gracefully within SHUTDOWN_TIMEOUT_MS (10 s by
# default): give the container a longer stop timeout than that.
STOPSIGNAL SIGTERM
# Pending migrations are applied at start (MIGRATE_ON_START=true, safe from
# many replicas at once). As a release step instead:
#   docker run --rm -e DATABASE_URL=… <image> node dist/cli/main.js migrate
# then start the replicas with MIGRATE_ON_START=false.
# Operator commands: node dist/cli/main.js <command>
# npm start's memory flags (test/deployment.test.ts holds them equal; docs/OPERATIONS.md, "Memory").
CMD ["node", "--max-semi-space-size=16", "--max-old-space-size=256", "dist/main.js"]
