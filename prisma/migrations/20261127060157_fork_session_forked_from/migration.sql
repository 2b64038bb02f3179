-- AlterTable
ALTER TABLE "Session" ADD COLUMN     "forkedFromEventId" TEXT,
ADD COLUMN     "forkedFromSessionId" TEXT;
