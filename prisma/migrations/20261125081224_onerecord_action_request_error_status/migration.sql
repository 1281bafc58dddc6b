-- AlterTable
ALTER TABLE "action_request" ADD COLUMN     "error_status" INTEGER;
