-- AlterTable
ALTER TABLE "logistics_object_grant" ADD COLUMN     "granted_with_key" UUID,
ADD COLUMN     "may_pass_on" BOOLEAN NOT NULL DEFAULT false;

-- CreateIndex
CREATE INDEX "logistics_object_grant_granted_by_object_id_idx" ON "logistics_object_grant"("granted_by", "object_id");
