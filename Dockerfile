# svc in a container: `docker build -t svc .`, then `docker run -p 8080:8080 -v svc-data:/data svc`
# (the embedded database in the /data volume), or compose.yaml for PostgreSQL and workers.
# Two stages: the build stage installs everything and compiles dist/ and web/dist; the image
# keeps only production packages, the compiled code and the files svc reads at run time.
# Nothing is downloaded but packages (npm, Debian's git).

FROM node:22-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# Scripts off until the sources are here: `prepare` builds them.
RUN npm ci --ignore-scripts && npm rebuild esbuild
COPY . .
RUN npm run build && npm run build:web

FROM node:22-bookworm-slim
# git: the local code host and `svc review` read repositories with it.
RUN apt-get update \
  && apt-get install -y --no-install-recommends git ca-certificates \
  && rm -rf /var/lib/apt/lists/*
WORKDIR /app
ENV NODE_ENV=production
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts && npm cache clean --force
COPY bin ./bin
COPY drizzle ./drizzle
# Read at run time: the skill catalog (SKILL.md, rules) and the embedded database's init script.
COPY src/skills ./src/skills
COPY src/storage/pglite-init.mjs ./src/storage/pglite-init.mjs
COPY --from=build /app/dist ./dist
COPY --from=build /app/web/dist ./web/dist
RUN mkdir -p /data /repos && chown node:node /data /repos
USER node
ENV HOST=0.0.0.0 PORT=8080 SVC_DATA_DIR=/data SVC_REPOS_DIR=/repos
VOLUME ["/data"]
EXPOSE 8080
HEALTHCHECK --interval=15s --timeout=3s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
CMD ["node", "bin/svc.mjs", "serve"]
