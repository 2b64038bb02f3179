-- AlterTable
ALTER TABLE "Session" ADD COLUMN     "fireCapNanoUsd" BIGINT,
ADD COLUMN     "fireTurn" INTEGER;
