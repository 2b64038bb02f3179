-- AlterTable
ALTER TABLE "Agent" ADD COLUMN     "toolPolicy" JSONB NOT NULL DEFAULT '{}';
