-- AlterTable
ALTER TABLE "onerecord_partner" ADD COLUMN     "audience" TEXT;
