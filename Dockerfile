# One image for every Tributary process; the command picks the app (each with the flags of the CMD below):
#   node --max-semi-space-size=32 dist/apps/tributary/src/main.js      all-in-one (the default)
#   node --max-semi-space-size=32 dist/apps/config-api/src/main.js     Config API (/v1beta)
#   node --max-semi-space-size=32 dist/apps/tracking-api/src/main.js   tracking API (/v1/*, /token)
#   node --max-semi-space-size=32 dist/apps/router/src/main.js         router (destination consumers, replays, redrives)

# --- build: every dependency, then `nest build` of each app -----------------------------------------
FROM node:24-bookworm-slim AS build
WORKDIR /app
# No native module is compiled: the embedded stores use Node's built-in `node:sqlite`.
COPY package.json package-lock.json ./
# The postinstall script (installs the console package when its sources are there).
COPY scripts ./scripts
RUN npm ci --no-audit --no-fund
COPY nest-cli.json tsconfig.json tsconfig.build.json ./
COPY apps ./apps
COPY libs ./libs
# Each build empties dist/ first (deleteOutDir) and compiles all of apps/ and libs/, so building
# them in turn checks that each app compiles and leaves every app's output in dist/.
RUN set -e; \
    for app in tributary config-api tracking-api router cli; do npx nest build "$app"; done; \
    for app in tributary config-api tracking-api router cli; do test -f "dist/apps/$app/src/main.js"; done
# The web console's static files (served at /console by the Config API and the all-in-one).
COPY console ./console
RUN node scripts/install-console.js && npm run build:console && test -f console/dist/index.html

# --- production dependencies only, built on the same base so native modules match ------------------
FROM node:24-bookworm-slim AS production-dependencies
WORKDIR /app
COPY package.json package-lock.json ./
COPY scripts ./scripts
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force

# --- runtime ----------------------------------------------------------------------------------------
FROM node:24-bookworm-slim AS runtime
# The image is what shared deployments run: destinations reach public addresses only unless the
# operator sets TRIBUTARY_EGRESS=open (or lists internal targets in TRIBUTARY_EGRESS_ALLOW).
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8080 \
    DATA_DIR=/data \
    TRIBUTARY_EGRESS=public
WORKDIR /app
COPY --from=production-dependencies /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/console/dist ./console/dist
COPY package.json ./
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME /data
EXPOSE 8080
# The image has no curl: Node's fetch checks readiness (`/health/ready`: event store and log answer).
HEALTHCHECK --interval=10s --timeout=5s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/health/ready').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# A young generation of 2 x 32 MB (the default is 2 x 16 MB): a delivery's objects live a few milliseconds
# past a smaller one's collections and are copied, then promoted; this took 15-20 % off the router's
# CPU in `npm run bench` (BENCHMARKS.md). The same flags as `npm start`.
CMD ["node", "--max-semi-space-size=32", "dist/apps/tributary/src/main.js"]
