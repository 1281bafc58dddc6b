-- AlterTable
ALTER TABLE "action_request" ADD COLUMN     "decided_by" TEXT;
