-- AlterTable
ALTER TABLE "Session" ADD COLUMN     "installedSkills" JSONB NOT NULL DEFAULT '[]';

-- CreateTable
CREATE TABLE "File" (
    "id" TEXT NOT NULL,
    "universeId" TEXT NOT NULL,
    "sessionId" TEXT,
    "sourceFileId" TEXT,
    "filename" TEXT NOT NULL,
    "mimeType" TEXT NOT NULL,
    "sizeBytes" INTEGER NOT NULL,
    "sha256" TEXT NOT NULL,
    "blobKey" TEXT NOT NULL,
    "downloadable" BOOLEAN NOT NULL DEFAULT false,
    "expiresAt" TIMESTAMP(3),
    "deletedAt" TIMESTAMP(3),
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "File_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "SessionResource" (
    "id" TEXT NOT NULL,
    "sessionId" TEXT NOT NULL,
    "type" TEXT NOT NULL,
    "fileId" TEXT,
    "url" TEXT,
    "mountPath" TEXT NOT NULL,
    "checkout" JSONB,
    "tokenSealed" TEXT,
    "syncedAt" TIMESTAMP(3),
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "SessionResource_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Skill" (
    "id" TEXT NOT NULL,
    "universeId" TEXT NOT NULL,
    "displayName" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "latestRevisionId" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "Skill_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "SkillRevision" (
    "id" TEXT NOT NULL,
    "skillId" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "description" TEXT NOT NULL,
    "files" JSONB NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "SkillRevision_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "File_universeId_sessionId_createdAt_idx" ON "File"("universeId", "sessionId", "createdAt");

-- CreateIndex
CREATE INDEX "SessionResource_sessionId_createdAt_idx" ON "SessionResource"("sessionId", "createdAt");

-- CreateIndex
CREATE INDEX "Skill_universeId_createdAt_idx" ON "Skill"("universeId", "createdAt");

-- CreateIndex
CREATE INDEX "SkillRevision_skillId_createdAt_idx" ON "SkillRevision"("skillId", "createdAt");

-- AddForeignKey
ALTER TABLE "SkillRevision" ADD CONSTRAINT "SkillRevision_skillId_fkey" FOREIGN KEY ("skillId") REFERENCES "Skill"("id") ON DELETE CASCADE ON UPDATE CASCADE;
