-- AlterTable
ALTER TABLE "delivery" ADD COLUMN     "trace_parent" TEXT;
