-- AlterTable
ALTER TABLE "Session" ADD COLUMN     "cliConversationId" TEXT,
ADD COLUMN     "environmentId" TEXT,
ADD COLUMN     "vaultIds" TEXT[] DEFAULT ARRAY[]::TEXT[];

-- CreateTable
CREATE TABLE "Environment" (
    "id" TEXT NOT NULL,
    "universeId" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "description" TEXT,
    "packages" JSONB NOT NULL DEFAULT '{}',
    "network" JSONB NOT NULL DEFAULT '{}',
    "version" INTEGER NOT NULL DEFAULT 1,
    "archivedAt" TIMESTAMP(3),
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "Environment_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Vault" (
    "id" TEXT NOT NULL,
    "universeId" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "Vault_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "VaultCredential" (
    "vaultId" TEXT NOT NULL,
    "key" TEXT NOT NULL,
    "host" TEXT NOT NULL,
    "header" TEXT NOT NULL DEFAULT 'Authorization',
    "prefix" TEXT NOT NULL DEFAULT 'Bearer ',
    "valueSealed" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "VaultCredential_pkey" PRIMARY KEY ("vaultId","key")
);

-- CreateIndex
CREATE INDEX "Environment_universeId_createdAt_idx" ON "Environment"("universeId", "createdAt");

-- CreateIndex
CREATE INDEX "Vault_universeId_createdAt_idx" ON "Vault"("universeId", "createdAt");

-- AddForeignKey
ALTER TABLE "Session" ADD CONSTRAINT "Session_environmentId_fkey" FOREIGN KEY ("environmentId") REFERENCES "Environment"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "VaultCredential" ADD CONSTRAINT "VaultCredential_vaultId_fkey" FOREIGN KEY ("vaultId") REFERENCES "Vault"("id") ON DELETE CASCADE ON UPDATE CASCADE;
