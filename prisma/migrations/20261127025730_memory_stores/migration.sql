-- AlterTable
ALTER TABLE "SessionResource" ADD COLUMN     "access" TEXT,
ADD COLUMN     "instructions" TEXT,
ADD COLUMN     "memorySnapshot" JSONB,
ADD COLUMN     "memoryStoreId" TEXT;

-- CreateTable
CREATE TABLE "MemoryStore" (
    "id" TEXT NOT NULL,
    "universeId" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "description" TEXT,
    "metadata" JSONB NOT NULL DEFAULT '{}',
    "archivedAt" TIMESTAMP(3),
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "MemoryStore_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Memory" (
    "id" TEXT NOT NULL,
    "storeId" TEXT NOT NULL,
    "path" TEXT NOT NULL,
    "content" TEXT NOT NULL,
    "contentSha256" TEXT NOT NULL,
    "sizeBytes" INTEGER NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "Memory_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "MemoryVersion" (
    "id" TEXT NOT NULL,
    "storeId" TEXT NOT NULL,
    "memoryId" TEXT NOT NULL,
    "operation" TEXT NOT NULL,
    "path" TEXT,
    "content" TEXT,
    "contentSha256" TEXT,
    "sizeBytes" INTEGER,
    "actorType" TEXT NOT NULL,
    "actorId" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "redactedAt" TIMESTAMP(3),
    "redactedBy" TEXT,

    CONSTRAINT "MemoryVersion_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "MemoryStore_universeId_createdAt_idx" ON "MemoryStore"("universeId", "createdAt");

-- CreateIndex
CREATE UNIQUE INDEX "Memory_storeId_path_key" ON "Memory"("storeId", "path");

-- CreateIndex
CREATE INDEX "MemoryVersion_memoryId_id_idx" ON "MemoryVersion"("memoryId", "id");

-- CreateIndex
CREATE INDEX "MemoryVersion_storeId_id_idx" ON "MemoryVersion"("storeId", "id");

-- AddForeignKey
ALTER TABLE "Memory" ADD CONSTRAINT "Memory_storeId_fkey" FOREIGN KEY ("storeId") REFERENCES "MemoryStore"("id") ON DELETE CASCADE ON UPDATE CASCADE;
