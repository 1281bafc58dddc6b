-- AlterTable
ALTER TABLE "onerecord_subscription" ADD COLUMN     "agent_scopes" TEXT[];
