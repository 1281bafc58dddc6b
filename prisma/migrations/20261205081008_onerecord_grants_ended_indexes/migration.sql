-- CreateIndex
CREATE INDEX "logistics_object_grant_granted_by_expires_at_idx" ON "logistics_object_grant"("granted_by", "expires_at");

-- CreateIndex
CREATE INDEX "logistics_object_grant_granted_with_key_idx" ON "logistics_object_grant"("granted_with_key");
