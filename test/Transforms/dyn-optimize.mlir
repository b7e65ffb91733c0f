// The dyn-optimize pipeline: canonicalize, dyn-optimize-guards, cse.
// RUN: tensor-opt %S/Inputs/seed_testnet.mlir -dyn-optimize --verify-each | FileCheck %s

// CHECK-LABEL: func.func @TestNet_forward
// CHECK-SAME: dyn.guards = [{{.*}}kind = "id_match"{{.*}}kind = "type_match"{{.*}}kind = "tensor_match"
// CHECK-NEXT: dyn.guard.id_match "G['torch']"
// CHECK: %[[ZERO:.*]] = dyn.constant dense<0.000000e+00>
// CHECK-NOT: dyn.constant dense<0.000000e+00>
// CHECK: dyn.gt %{{.*}}, %[[ZERO]]
// CHECK: dyn.gt %{{.*}}, %[[ZERO]]
