-- AlterTable
ALTER TABLE "WebhookDelivery" ADD COLUMN     "lockedBy" TEXT;
