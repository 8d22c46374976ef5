; A test kernel for the host JIT, emitted by clang-19 -O2 -Xclang
; -disable-llvm-passes -g0 -S -emit-llvm -fno-discard-value-names from:
;   extern int counter;
;   extern double scale[4];
;   double bump(int by) {
;     counter += by;
;     double t = 0;
;     for (int i = 0; i < 4; ++i)
;       t += scale[i] * counter;
;     return t;
;   }
;
source_filename = "glob.c"
target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128"
target triple = "x86_64-pc-linux-gnu"

@counter = external dso_local global i32, align 4
@scale = external global [4 x double], align 16

; Function Attrs: nounwind uwtable
define dso_local double @bump(i32 noundef %by) #0 {
entry:
  %by.addr = alloca i32, align 4
  %t = alloca double, align 8
  %i = alloca i32, align 4
  store i32 %by, ptr %by.addr, align 4, !tbaa !5
  %0 = load i32, ptr %by.addr, align 4, !tbaa !5
  %1 = load i32, ptr @counter, align 4, !tbaa !5
  %add = add nsw i32 %1, %0
  store i32 %add, ptr @counter, align 4, !tbaa !5
  call void @llvm.lifetime.start.p0(i64 8, ptr %t) #3
  store double 0.000000e+00, ptr %t, align 8, !tbaa !9
  call void @llvm.lifetime.start.p0(i64 4, ptr %i) #3
  store i32 0, ptr %i, align 4, !tbaa !5
  br label %for.cond

for.cond:                                         ; preds = %for.inc, %entry
  %2 = load i32, ptr %i, align 4, !tbaa !5
  %cmp = icmp slt i32 %2, 4
  br i1 %cmp, label %for.body, label %for.cond.cleanup

for.cond.cleanup:                                 ; preds = %for.cond
  call void @llvm.lifetime.end.p0(i64 4, ptr %i) #3
  br label %for.end

for.body:                                         ; preds = %for.cond
  %3 = load i32, ptr %i, align 4, !tbaa !5
  %idxprom = sext i32 %3 to i64
  %arrayidx = getelementptr inbounds [4 x double], ptr @scale, i64 0, i64 %idxprom
  %4 = load double, ptr %arrayidx, align 8, !tbaa !9
  %5 = load i32, ptr @counter, align 4, !tbaa !5
  %conv = sitofp i32 %5 to double
  %6 = load double, ptr %t, align 8, !tbaa !9
  %7 = call double @llvm.fmuladd.f64(double %4, double %conv, double %6)
  store double %7, ptr %t, align 8, !tbaa !9
  br label %for.inc

for.inc:                                          ; preds = %for.body
  %8 = load i32, ptr %i, align 4, !tbaa !5
  %inc = add nsw i32 %8, 1
  store i32 %inc, ptr %i, align 4, !tbaa !5
  br label %for.cond, !llvm.loop !11

for.end:                                          ; preds = %for.cond.cleanup
  %9 = load double, ptr %t, align 8, !tbaa !9
  call void @llvm.lifetime.end.p0(i64 8, ptr %t) #3
  ret double %9
}

; Function Attrs: nocallback nofree nosync nounwind willreturn memory(argmem: readwrite)
declare void @llvm.lifetime.start.p0(i64 immarg, ptr nocapture) #1

; Function Attrs: nocallback nofree nosync nounwind speculatable willreturn memory(none)
declare double @llvm.fmuladd.f64(double, double, double) #2

; Function Attrs: nocallback nofree nosync nounwind willreturn memory(argmem: readwrite)
declare void @llvm.lifetime.end.p0(i64 immarg, ptr nocapture) #1

attributes #0 = { nounwind uwtable "min-legal-vector-width"="0" "no-trapping-math"="true" "stack-protector-buffer-size"="8" "target-cpu"="x86-64" "target-features"="+cmov,+cx8,+fxsr,+mmx,+sse,+sse2,+x87" "tune-cpu"="generic" }
attributes #1 = { nocallback nofree nosync nounwind willreturn memory(argmem: readwrite) }
attributes #2 = { nocallback nofree nosync nounwind speculatable willreturn memory(none) }
attributes #3 = { nounwind }

!llvm.module.flags = !{!0, !1, !2, !3}

!0 = !{i32 1, !"wchar_size", i32 4}
!1 = !{i32 8, !"PIC Level", i32 2}
!2 = !{i32 7, !"PIE Level", i32 2}
!3 = !{i32 7, !"uwtable", i32 2}
!5 = !{!6, !6, i64 0}
!6 = !{!"int", !7, i64 0}
!7 = !{!"omnipotent char", !8, i64 0}
!8 = !{!"Simple C/C++ TBAA"}
!9 = !{!10, !10, i64 0}
!10 = !{!"double", !7, i64 0}
!11 = distinct !{!11, !12}
!12 = !{!"llvm.loop.mustprogress"}
