# The sandbox image: what a session's pod runs (SANDBOX_IMAGE). Build from the repository root:
#   docker build -f docker/sandbox.Dockerfile -t agent-service-sandbox .
# Node 24 (the engines' CLIs need Node >= 22), git, Python, common build tools, and socat for the
# pod's egress forwarder. The pod runs as uid 1000 (`node`) with a read-only root filesystem;
# /workspace, /tmp and /run/agent-service are volumes.
FROM node:24-bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends \
      ca-certificates git openssh-client curl wget socat procps util-linux \
      python3 python3-pip python3-venv build-essential pkg-config \
      jq ripgrep unzip zip xz-utils less file \
 && rm -rf /var/lib/apt/lists/*
# The engines' CLIs (versions as checked in STACK.md); they talk to the model gateway at
# 127.0.0.1:3128/gateway with the session's credential, never a provider key.
RUN npm install -g --no-audit --no-fund \
      @anthropic-ai/claude-code@2.1 \
      @openai/codex@0.169 \
      opencode-ai@1.18 \
      @mariozechner/pi-coding-agent@0.73 \
 && npm cache clean --force
# The node forwarder (used where socat is missing; kept for parity with local sandboxes).
COPY src/sandbox/assets/egress-forwarder.mjs /usr/local/lib/agent-service/egress-forwarder.mjs
# pip and npm caches and global installs go to the writable places.
ENV HOME=/workspace \
    PIP_NO_CACHE_DIR=1 \
    PIP_BREAK_SYSTEM_PACKAGES=1 \
    npm_config_cache=/tmp/.npm \
    PYTHONDONTWRITEBYTECODE=1 \
    LANG=C.UTF-8
USER 1000:1000
WORKDIR /workspace
