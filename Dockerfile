FROM node:24-bookworm-slim
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund
COPY . .
ENV NODE_ENV=production
EXPOSE 3000
# The image's unprivileged user; the files stay root-owned, so the process cannot rewrite its code.
USER node
CMD ["npm", "start"]
