-- AlterTable
ALTER TABLE "WebhookEndpoint" ADD COLUMN     "kind" TEXT NOT NULL DEFAULT 'outbound';

-- CreateTable
CREATE TABLE "ChannelApp" (
    "id" TEXT NOT NULL,
    "universeId" TEXT NOT NULL,
    "platform" TEXT NOT NULL,
    "label" TEXT NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'active',
    "credentials" TEXT NOT NULL,
    "credentialKeys" TEXT[],
    "inboundSecret" TEXT NOT NULL,
    "platformInfo" JSONB NOT NULL DEFAULT '{}',
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "ChannelApp_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "ChannelConnection" (
    "id" TEXT NOT NULL,
    "universeId" TEXT NOT NULL,
    "platform" TEXT NOT NULL,
    "appId" TEXT,
    "label" TEXT NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'PENDING',
    "channelId" TEXT,
    "metadata" JSONB NOT NULL DEFAULT '{}',
    "connectToken" TEXT,
    "connectCode" TEXT,
    "connectExpiresAt" TIMESTAMP(3),
    "callbackUrl" TEXT,
    "inviteUser" TEXT,
    "lastThreadId" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "ChannelConnection_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "ChannelBinding" (
    "id" TEXT NOT NULL,
    "universeId" TEXT NOT NULL,
    "connectionId" TEXT NOT NULL,
    "threadId" TEXT,
    "threadKey" TEXT NOT NULL,
    "sessionId" TEXT,
    "webhookEndpointId" TEXT,
    "isDefault" BOOLEAN NOT NULL DEFAULT false,
    "status" TEXT NOT NULL DEFAULT 'active',
    "routeKey" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "ChannelBinding_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "ChannelInbound" (
    "id" TEXT NOT NULL,
    "universeId" TEXT NOT NULL,
    "connectionId" TEXT,
    "appId" TEXT,
    "dedupeKey" TEXT NOT NULL,
    "payload" JSONB NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'received',
    "lockedUntil" TIMESTAMP(3),
    "note" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "processedAt" TIMESTAMP(3),

    CONSTRAINT "ChannelInbound_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "ChannelReply" (
    "id" TEXT NOT NULL,
    "connectionId" TEXT NOT NULL,
    "threadId" TEXT NOT NULL,
    "sessionId" TEXT NOT NULL,
    "inputEventId" TEXT NOT NULL,
    "inputSeq" INTEGER NOT NULL,
    "replyTo" TEXT,
    "context" JSONB NOT NULL DEFAULT '{}',
    "status" TEXT NOT NULL DEFAULT 'pending',
    "turnSeq" INTEGER,
    "error" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "ChannelReply_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "ChannelEvent" (
    "id" TEXT NOT NULL,
    "universeId" TEXT NOT NULL,
    "seq" INTEGER NOT NULL,
    "type" TEXT NOT NULL,
    "payload" JSONB NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "ChannelEvent_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "ChannelEventFeed" (
    "universeId" TEXT NOT NULL,
    "seq" INTEGER NOT NULL DEFAULT 0,

    CONSTRAINT "ChannelEventFeed_pkey" PRIMARY KEY ("universeId")
);

-- CreateTable
CREATE TABLE "LoopbackMessage" (
    "id" TEXT NOT NULL,
    "connectionId" TEXT NOT NULL,
    "threadId" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "body" JSONB NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "LoopbackMessage_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "ChannelApp_universeId_createdAt_idx" ON "ChannelApp"("universeId", "createdAt");

-- CreateIndex
CREATE UNIQUE INDEX "ChannelConnection_connectToken_key" ON "ChannelConnection"("connectToken");

-- CreateIndex
CREATE INDEX "ChannelConnection_universeId_createdAt_idx" ON "ChannelConnection"("universeId", "createdAt");

-- CreateIndex
CREATE INDEX "ChannelConnection_appId_channelId_idx" ON "ChannelConnection"("appId", "channelId");

-- CreateIndex
CREATE INDEX "ChannelConnection_appId_connectCode_idx" ON "ChannelConnection"("appId", "connectCode");

-- CreateIndex
CREATE INDEX "ChannelBinding_universeId_createdAt_idx" ON "ChannelBinding"("universeId", "createdAt");

-- CreateIndex
CREATE UNIQUE INDEX "ChannelBinding_connectionId_threadKey_key" ON "ChannelBinding"("connectionId", "threadKey");

-- CreateIndex
CREATE UNIQUE INDEX "ChannelInbound_dedupeKey_key" ON "ChannelInbound"("dedupeKey");

-- CreateIndex
CREATE INDEX "ChannelInbound_status_createdAt_idx" ON "ChannelInbound"("status", "createdAt");

-- CreateIndex
CREATE INDEX "ChannelReply_status_createdAt_idx" ON "ChannelReply"("status", "createdAt");

-- CreateIndex
CREATE UNIQUE INDEX "ChannelReply_sessionId_connectionId_threadId_turnSeq_key" ON "ChannelReply"("sessionId", "connectionId", "threadId", "turnSeq");

-- CreateIndex
CREATE UNIQUE INDEX "ChannelEvent_universeId_seq_key" ON "ChannelEvent"("universeId", "seq");

-- CreateIndex
CREATE INDEX "LoopbackMessage_connectionId_id_idx" ON "LoopbackMessage"("connectionId", "id");

-- AddForeignKey
ALTER TABLE "ChannelConnection" ADD CONSTRAINT "ChannelConnection_appId_fkey" FOREIGN KEY ("appId") REFERENCES "ChannelApp"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "ChannelBinding" ADD CONSTRAINT "ChannelBinding_connectionId_fkey" FOREIGN KEY ("connectionId") REFERENCES "ChannelConnection"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "ChannelBinding" ADD CONSTRAINT "ChannelBinding_sessionId_fkey" FOREIGN KEY ("sessionId") REFERENCES "Session"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "ChannelBinding" ADD CONSTRAINT "ChannelBinding_webhookEndpointId_fkey" FOREIGN KEY ("webhookEndpointId") REFERENCES "WebhookEndpoint"("id") ON DELETE CASCADE ON UPDATE CASCADE;
