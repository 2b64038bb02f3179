-- AlterTable
ALTER TABLE "ModelUsage" DROP COLUMN "costMicroCents",
ADD COLUMN     "costNanoUsd" BIGINT NOT NULL DEFAULT 0;

-- AlterTable
ALTER TABLE "Session" DROP COLUMN "consumedMicroCents",
ADD COLUMN     "consumedNanoUsd" BIGINT NOT NULL DEFAULT 0;

-- AlterTable
ALTER TABLE "Universe" ADD COLUMN     "balanceNanoUsd" BIGINT NOT NULL DEFAULT 0,
ADD COLUMN     "heldNanoUsd" BIGINT NOT NULL DEFAULT 0;

-- CreateTable
CREATE TABLE "WalletEntry" (
    "id" TEXT NOT NULL,
    "universeId" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "amountNanoUsd" BIGINT NOT NULL,
    "sessionId" TEXT,
    "usageId" TEXT,
    "note" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "WalletEntry_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "ModelSubscription" (
    "id" TEXT NOT NULL,
    "universeId" TEXT NOT NULL,
    "provider" TEXT NOT NULL,
    "label" TEXT,
    "credential" TEXT NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'connected',
    "expiresAt" TIMESTAMP(3),
    "lastUsedAt" TIMESTAMP(3),
    "useForNewAgents" BOOLEAN NOT NULL DEFAULT false,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "ModelSubscription_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "WalletEntry_universeId_createdAt_idx" ON "WalletEntry"("universeId", "createdAt");

-- CreateIndex
CREATE UNIQUE INDEX "ModelSubscription_universeId_provider_key" ON "ModelSubscription"("universeId", "provider");
