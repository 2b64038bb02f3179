-- AlterTable
ALTER TABLE "Session" DROP COLUMN "isDefault";
