-- AlterTable
ALTER TABLE "Agent" ADD COLUMN     "multiagent" JSONB;

-- AlterTable
ALTER TABLE "Session" ADD COLUMN     "parentSessionId" TEXT,
ADD COLUMN     "roster" JSONB,
ADD COLUMN     "threadAgentName" TEXT;

-- CreateIndex
CREATE INDEX "Session_parentSessionId_idx" ON "Session"("parentSessionId");

-- AddForeignKey
ALTER TABLE "Session" ADD CONSTRAINT "Session_parentSessionId_fkey" FOREIGN KEY ("parentSessionId") REFERENCES "Session"("id") ON DELETE CASCADE ON UPDATE CASCADE;
