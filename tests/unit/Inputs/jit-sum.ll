; A test kernel for the host JIT, emitted by clang-19 -O2 -Xclang
; -disable-llvm-passes -g0 -S -emit-llvm -fno-discard-value-names from:
;   long sum_squares(const int *v, long n, unsigned char shift) {
;     long s = 0;
;     for (long i = 0; i < n; ++i)
;       s += (long)v[i] * v[i];
;     return s << shift;
;   }
;
source_filename = "sum.c"
target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128"
target triple = "x86_64-pc-linux-gnu"

; Function Attrs: nounwind uwtable
define dso_local i64 @sum_squares(ptr noundef %v, i64 noundef %n, i8 noundef zeroext %shift) #0 {
entry:
  %v.addr = alloca ptr, align 8
  %n.addr = alloca i64, align 8
  %shift.addr = alloca i8, align 1
  %s = alloca i64, align 8
  %i = alloca i64, align 8
  store ptr %v, ptr %v.addr, align 8, !tbaa !5
  store i64 %n, ptr %n.addr, align 8, !tbaa !9
  store i8 %shift, ptr %shift.addr, align 1, !tbaa !11
  call void @llvm.lifetime.start.p0(i64 8, ptr %s) #2
  store i64 0, ptr %s, align 8, !tbaa !9
  call void @llvm.lifetime.start.p0(i64 8, ptr %i) #2
  store i64 0, ptr %i, align 8, !tbaa !9
  br label %for.cond

for.cond:                                         ; preds = %for.inc, %entry
  %0 = load i64, ptr %i, align 8, !tbaa !9
  %1 = load i64, ptr %n.addr, align 8, !tbaa !9
  %cmp = icmp slt i64 %0, %1
  br i1 %cmp, label %for.body, label %for.cond.cleanup

for.cond.cleanup:                                 ; preds = %for.cond
  call void @llvm.lifetime.end.p0(i64 8, ptr %i) #2
  br label %for.end

for.body:                                         ; preds = %for.cond
  %2 = load ptr, ptr %v.addr, align 8, !tbaa !5
  %3 = load i64, ptr %i, align 8, !tbaa !9
  %arrayidx = getelementptr inbounds i32, ptr %2, i64 %3
  %4 = load i32, ptr %arrayidx, align 4, !tbaa !12
  %conv = sext i32 %4 to i64
  %5 = load ptr, ptr %v.addr, align 8, !tbaa !5
  %6 = load i64, ptr %i, align 8, !tbaa !9
  %arrayidx1 = getelementptr inbounds i32, ptr %5, i64 %6
  %7 = load i32, ptr %arrayidx1, align 4, !tbaa !12
  %conv2 = sext i32 %7 to i64
  %mul = mul nsw i64 %conv, %conv2
  %8 = load i64, ptr %s, align 8, !tbaa !9
  %add = add nsw i64 %8, %mul
  store i64 %add, ptr %s, align 8, !tbaa !9
  br label %for.inc

for.inc:                                          ; preds = %for.body
  %9 = load i64, ptr %i, align 8, !tbaa !9
  %inc = add nsw i64 %9, 1
  store i64 %inc, ptr %i, align 8, !tbaa !9
  br label %for.cond, !llvm.loop !14

for.end:                                          ; preds = %for.cond.cleanup
  %10 = load i64, ptr %s, align 8, !tbaa !9
  %11 = load i8, ptr %shift.addr, align 1, !tbaa !11
  %conv3 = zext i8 %11 to i32
  %sh_prom = zext i32 %conv3 to i64
  %shl = shl i64 %10, %sh_prom
  call void @llvm.lifetime.end.p0(i64 8, ptr %s) #2
  ret i64 %shl
}

; Function Attrs: nocallback nofree nosync nounwind willreturn memory(argmem: readwrite)
declare void @llvm.lifetime.start.p0(i64 immarg, ptr nocapture) #1

; Function Attrs: nocallback nofree nosync nounwind willreturn memory(argmem: readwrite)
declare void @llvm.lifetime.end.p0(i64 immarg, ptr nocapture) #1

attributes #0 = { nounwind uwtable "min-legal-vector-width"="0" "no-trapping-math"="true" "stack-protector-buffer-size"="8" "target-cpu"="x86-64" "target-features"="+cmov,+cx8,+fxsr,+mmx,+sse,+sse2,+x87" "tune-cpu"="generic" }
attributes #1 = { nocallback nofree nosync nounwind willreturn memory(argmem: readwrite) }
attributes #2 = { nounwind }

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
!10 = !{!"long", !7, i64 0}
!11 = !{!7, !7, i64 0}
!12 = !{!13, !13, i64 0}
!13 = !{!"int", !7, i64 0}
!14 = distinct !{!14, !15}
!15 = !{!"llvm.loop.mustprogress"}
