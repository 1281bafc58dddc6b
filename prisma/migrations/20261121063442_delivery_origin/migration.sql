-- AlterTable
ALTER TABLE "delivery" ADD COLUMN     "origin" TEXT NOT NULL;

-- CreateIndex
CREATE INDEX "delivery_client_id_status_created_at_idx" ON "delivery"("client_id", "status", "created_at");
