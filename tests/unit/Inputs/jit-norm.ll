; A test kernel for the host JIT, emitted by clang-19 -O2 -Xclang
; -disable-llvm-passes -g0 -S -emit-llvm -fno-discard-value-names from:
;   #include <math.h>
;   double norm(const double *v, int n) {
;     double s = 0;
;     for (int i = 0; i < n; ++i)
;       s += v[i] * v[i];
;     return sqrt(s);
;   }
;
source_filename = "norm.c"
target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128"
target triple = "x86_64-pc-linux-gnu"

; Function Attrs: nounwind uwtable
define dso_local double @norm(ptr noundef %v, i32 noundef %n) #0 {
entry:
  %v.addr = alloca ptr, align 8
  %n.addr = alloca i32, align 4
  %s = alloca double, align 8
  %i = alloca i32, align 4
  store ptr %v, ptr %v.addr, align 8, !tbaa !5
  store i32 %n, ptr %n.addr, align 4, !tbaa !9
  call void @llvm.lifetime.start.p0(i64 8, ptr %s) #4
  store double 0.000000e+00, ptr %s, align 8, !tbaa !11
  call void @llvm.lifetime.start.p0(i64 4, ptr %i) #4
  store i32 0, ptr %i, align 4, !tbaa !9
  br label %for.cond

for.cond:                                         ; preds = %for.inc, %entry
  %0 = load i32, ptr %i, align 4, !tbaa !9
  %1 = load i32, ptr %n.addr, align 4, !tbaa !9
  %cmp = icmp slt i32 %0, %1
  br i1 %cmp, label %for.body, label %for.cond.cleanup

for.cond.cleanup:                                 ; preds = %for.cond
  call void @llvm.lifetime.end.p0(i64 4, ptr %i) #4
  br label %for.end

for.body:                                         ; preds = %for.cond
  %2 = load ptr, ptr %v.addr, align 8, !tbaa !5
  %3 = load i32, ptr %i, align 4, !tbaa !9
  %idxprom = sext i32 %3 to i64
  %arrayidx = getelementptr inbounds double, ptr %2, i64 %idxprom
  %4 = load double, ptr %arrayidx, align 8, !tbaa !11
  %5 = load ptr, ptr %v.addr, align 8, !tbaa !5
  %6 = load i32, ptr %i, align 4, !tbaa !9
  %idxprom1 = sext i32 %6 to i64
  %arrayidx2 = getelementptr inbounds double, ptr %5, i64 %idxprom1
  %7 = load double, ptr %arrayidx2, align 8, !tbaa !11
  %8 = load double, ptr %s, align 8, !tbaa !11
  %9 = call double @llvm.fmuladd.f64(double %4, double %7, double %8)
  store double %9, ptr %s, align 8, !tbaa !11
  br label %for.inc

for.inc:                                          ; preds = %for.body
  %10 = load i32, ptr %i, align 4, !tbaa !9
  %inc = add nsw i32 %10, 1
  store i32 %inc, ptr %i, align 4, !tbaa !9
  br label %for.cond, !llvm.loop !13

for.end:                                          ; preds = %for.cond.cleanup
  %11 = load double, ptr %s, align 8, !tbaa !11
  %call = call double @sqrt(double noundef %11) #4
  call void @llvm.lifetime.end.p0(i64 8, ptr %s) #4
  ret double %call
}

; Function Attrs: nocallback nofree nosync nounwind willreturn memory(argmem: readwrite)
declare void @llvm.lifetime.start.p0(i64 immarg, ptr nocapture) #1

; Function Attrs: nocallback nofree nosync nounwind speculatable willreturn memory(none)
declare double @llvm.fmuladd.f64(double, double, double) #2

; Function Attrs: nocallback nofree nosync nounwind willreturn memory(argmem: readwrite)
declare void @llvm.lifetime.end.p0(i64 immarg, ptr nocapture) #1

; Function Attrs: nounwind
declare double @sqrt(double noundef) #3

attributes #0 = { nounwind uwtable "min-legal-vector-width"="0" "no-trapping-math"="true" "stack-protector-buffer-size"="8" "target-cpu"="x86-64" "target-features"="+cmov,+cx8,+fxsr,+mmx,+sse,+sse2,+x87" "tune-cpu"="generic" }
attributes #1 = { nocallback nofree nosync nounwind willreturn memory(argmem: readwrite) }
attributes #2 = { nocallback nofree nosync nounwind speculatable willreturn memory(none) }
attributes #3 = { nounwind "no-trapping-math"="true" "stack-protector-buffer-size"="8" "target-cpu"="x86-64" "target-features"="+cmov,+cx8,+fxsr,+mmx,+sse,+sse2,+x87" "tune-cpu"="generic" }
attributes #4 = { nounwind }

!llvm.module.flags = !{!0, !1, !2, !3}

!0 = !{i32 1, !"wchar_size", i32 4}
!1 = !{i32 8, !"PIC Level", i32 2}
!2 = !{i32 7, !"PIE Level", i32 2}
!3 = !{i32 7, !"uwtable", i32 2}
!5 = !{!6, !6, i64 0}
!6 = !{!"any pointer", !7, i64 0}
!7 = !{!"omnipotent char", !8, i64 0}
!8 = !{!"Simple C/C++ TBAA"}
!9 = !{!10, !10, i64 0}
!10 = !{!"int", !7, i64 0}
!11 = !{!12, !12, i64 0}
!12 = !{!"double", !7, i64 0}
!13 = distinct !{!13, !14}
!14 = !{!"llvm.loop.mustprogress"}
