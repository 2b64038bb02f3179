-- AlterTable
ALTER TABLE "RoutineRun" ADD COLUMN     "outcomeId" TEXT;

-- CreateTable
CREATE TABLE "Outcome" (
    "id" TEXT NOT NULL,
    "sessionId" TEXT NOT NULL,
    "eventId" TEXT NOT NULL,
    "description" TEXT NOT NULL,
    "rubric" TEXT NOT NULL,
    "maxIterations" INTEGER NOT NULL,
    "graderLlm" TEXT,
    "status" TEXT NOT NULL DEFAULT 'active',
    "iterations" INTEGER NOT NULL DEFAULT 0,
    "evaluations" JSONB NOT NULL DEFAULT '[]',
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,
    "endedAt" TIMESTAMP(3),

    CONSTRAINT "Outcome_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "Outcome_sessionId_status_idx" ON "Outcome"("sessionId", "status");

-- AddForeignKey
ALTER TABLE "Outcome" ADD CONSTRAINT "Outcome_sessionId_fkey" FOREIGN KEY ("sessionId") REFERENCES "Session"("id") ON DELETE CASCADE ON UPDATE CASCADE;
