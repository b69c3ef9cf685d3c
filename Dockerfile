# svc: one image for the server (`svc serve`), the workers (`svc worker`) and the dev chain (anvil from npm).
# node:20 (Debian bookworm, not slim): better-sqlite3 and secp256k1 may compile natively during `npm ci`.
FROM node:20-bookworm AS deps
WORKDIR /app
COPY package.json package-lock.json ./
# Production dependencies only (tsx runs the TypeScript sources; it is a runtime dependency).
RUN npm ci --omit=dev --no-audit --no-fund

FROM node:20-bookworm-slim
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8402 \
    DATA_DIR=/data
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY package.json package-lock.json tsconfig.json ./
COPY bin ./bin
COPY config ./config
COPY gen ./gen
COPY src ./src
RUN mkdir -p /data && chown node:node /data \
 && ln -s /app/bin/svc.mjs /usr/local/bin/svc
USER node
VOLUME ["/data"]
EXPOSE 8402
# The exec form: signals reach node directly, so SIGTERM drains in-flight requests (SHUTDOWN_GRACE_MS).
ENTRYPOINT ["node", "/app/bin/svc.mjs"]
CMD ["serve"]
