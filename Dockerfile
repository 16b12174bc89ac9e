# Two images from one file, on the current Node.js LTS (24; package.json's engines still allow >=20.18.1):
#   worker (the default, last stage): compiled JavaScript of src/ plus the prebuilt workflow bundle,
#     production dependencies only, no dev/ code.
#   simulator (--target simulator, compose profile demo): the documentation service's stand-in from
#     dev/simulator, run from TypeScript with tsx (a dev dependency); never for production.
FROM node:24-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
# npm ci checks the lockfile against every workspace's manifest.
COPY packages/client/package.json ./packages/client/
RUN npm ci --no-audit --no-fund

FROM deps AS build
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY scripts ./scripts
RUN npm run build && npm prune --omit=dev

FROM node:24-bookworm-slim AS simulator
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY package.json tsconfig.json ./
COPY dev/simulator ./dev/simulator
USER node
EXPOSE 4010
ENTRYPOINT ["node", "--import", "tsx", "dev/simulator/main.ts"]
CMD ["--port", "4010", "--host", "0.0.0.0"]

FROM node:24-bookworm-slim AS worker
# The build this image is: with TEMPORAL_DEPLOYMENT_NAME set, the worker joins version <package version>-<GIT_SHA>
# unless TEMPORAL_WORKER_BUILD_ID says otherwise. docker build --build-arg GIT_SHA=$(git rev-parse --short HEAD) .
ARG GIT_SHA=""
ENV NODE_ENV=production DOCS_AGENT_GIT_SHA=$GIT_SHA
WORKDIR /app
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
# The exports volume mounts here. Docker creates a missing mount point owned by root, which USER node cannot
# write; an empty named volume instead takes this directory's owner, so the first export can be written.
RUN mkdir -p /exports && chown node:node /exports
USER node
CMD ["node", "dist/worker.js"]
